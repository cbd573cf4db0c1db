"""The rating buttons' two due times, formatted from the date's numbers
(quiz.rating_previews.Preview), print as strftime prints them."""

from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from quiz.rating_previews import Preview
from quiz.templatetags.quiz_tags import rating_buttons

moments = st.datetimes(
    min_value=datetime(1000, 1, 1), max_value=datetime(9999, 12, 31), timezones=st.just(UTC)
)


@given(moments)
def test_the_due_times_print_as_strftime_prints_them(due):
    preview = Preview(3, "Got it", due, "in 3 days")
    assert preview.due_text == f"{due.day} {due:%b %Y, %H:%M}"
    assert preview.due_iso == f"{due:%Y-%m-%dT%H:%M:%SZ}"


def test_every_month_and_a_due_time_given_in_another_zone_print_in_utc():
    for month in range(1, 13):
        due = datetime(2026, month, 3, 9, 5, 7, tzinfo=UTC)
        assert Preview(1, "Missed it", due, "").due_text == f"3 {due:%b} 2026, 09:05"
    # 23:30 on 31 Dec in UTC-1 is 00:30 on 1 Jan in UTC: the button says so.
    late = datetime(2026, 12, 31, 23, 30, tzinfo=timezone(timedelta(hours=-1)))
    preview = Preview(4, "Easy", late, "in 1 year")
    assert (preview.due_text, preview.due_iso) == ("1 Jan 2027, 00:30", "2027-01-01T00:30:00Z")


def test_a_button_carries_both_times_and_escapes_its_words():
    due = datetime(2026, 12, 3, 9, 15, 30, tzinfo=UTC)
    html = rating_buttons([Preview(2, "Hard <b>", due, "in 1 day & more")])
    assert 'title="Comes back 3 Dec 2026, 09:15 UTC" data-due="2026-12-03T09:15:30Z"' in html
    assert "Hard &lt;b&gt;" in html and "in 1 day &amp; more" in html
