from django.db import models


class SharedVersion(models.Model):
    """A shared token (pagecache.content_cache.SharedToken) where there is no Redis: every worker
    of every host reads it from here, so an edit on one reaches what all of them keep."""

    name = models.CharField(max_length=40, primary_key=True)
    token = models.CharField(max_length=32)

    class Meta:
        # The table serving created before the model moved here: renaming it would break the
        # hosts still running the release before during a rolling deploy.
        db_table = "serving_sharedversion"

    def __str__(self) -> str:
        return f"{self.name}: {self.token}"
