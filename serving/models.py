from django.db import models


class RateLimitCount(models.Model):
    """One key's count in its current window, where rate limits count without Redis: every
    worker of every host adds to it in one atomic statement (serving/ratelimit.py)."""

    key = models.CharField(max_length=200, unique=True)
    # Seconds since the epoch by the limiter's clock: when this window opened, when it ends.
    opened = models.FloatField()
    ends = models.FloatField(db_index=True)
    count = models.PositiveIntegerField()

    def __str__(self) -> str:
        return f"{self.key}: {self.count} since {self.opened}"
