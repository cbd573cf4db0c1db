"""Reviews recorded before showings existed get one each, and every learner a schedule."""

from collections import defaultdict

from django.db import migrations

from quiz import scheduling


def backfill(apps, schema_editor):
    Review = apps.get_model("quiz", "Review")
    Showing = apps.get_model("quiz", "Showing")
    CardState = apps.get_model("quiz", "CardState")

    for review in Review.objects.filter(showing__isnull=True).iterator():
        review.showing = Showing.objects.create(
            card_id=review.card_id,
            user_id=review.user_id,
            session_key="" if review.user_id else review.session_key,
            shown_at=review.reviewed_at,
        )
        review.save(update_fields=["showing"])

    histories = defaultdict(list)
    for review in Review.objects.order_by("reviewed_at", "id").iterator():
        owner = (review.user_id, "" if review.user_id else review.session_key)
        histories[(review.card_id, owner)].append((review.rating, review.reviewed_at))
    for (card_id, (user_id, session_key)), history in histories.items():
        fsrs_card = scheduling.replay(card_id, history, start=history[0][1])
        CardState.objects.update_or_create(
            card_id=card_id,
            user_id=user_id,
            session_key=session_key,
            defaults={
                "fsrs_card": fsrs_card.to_dict(),
                "due": fsrs_card.due,
                "last_rating": history[-1][0],
                "last_reviewed_at": history[-1][1],
                "review_count": len(history),
            },
        )


class Migration(migrations.Migration):
    dependencies = [("quiz", "0002_showings_schedules_and_profiles")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop)]
