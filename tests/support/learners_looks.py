"""Learners for the tests of parts kept by how a learner's progress looks (home's map,
/progress/'s sections): a set of learners, and the check that each gets what a fresh build gives
them whoever came first."""

from collections.abc import Callable

from django.test import Client

from pagecache.content_cache import CONTENT
from tests.textutil import without_csrf_tokens


class Learners(dict[str, Client]):
    """Test clients by name: a first-time visitor, then each signed-in learner added."""

    def __init__(self, user_model) -> None:
        super().__init__({"first visit": Client()})
        self._user_model = user_model

    def add(self, name: str) -> Client:
        client = Client()
        client.force_login(self._user_model.objects.create_user(name.replace(" ", "-"), password="x" * 20))
        self[name] = client
        return client

    def settled(self) -> "Learners":
        """Each has seen their Saved messages (a page shows them once), and nothing is kept yet."""
        for client in self.values():
            client.get("/review/")
        CONTENT.changed()
        return self


def page_of(path: str) -> Callable[[Client], str]:
    def page(client: Client) -> str:
        response = client.get(path)
        assert response.status_code == 200
        return without_csrf_tokens(response.content.decode())

    return page


def assert_each_gets_a_fresh_build(learners: Learners, page: Callable[[Client], str]) -> None:
    kept_from_others = {name: page(client) for name, client in learners.items()}
    for name, client in reversed(learners.items()):
        CONTENT.changed()  # nothing kept: this learner's page is built for them alone
        assert page(client) == kept_from_others[name], name
    assert len(set(kept_from_others.values())) == len(learners)  # every page differs from the others
