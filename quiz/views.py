from django.contrib import messages
from django.http import HttpRequest, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_POST

from lessons.models import Card

from .models import Rating, Review


@require_POST
def rate_card(request: HttpRequest, course_slug: str, lesson_slug: str, step: int) -> HttpResponse:
    card = get_object_or_404(
        Card.objects.select_related("lesson__course"),
        lesson__course__slug=course_slug,
        lesson__slug=lesson_slug,
        step=step,
    )
    try:
        rating = Rating(int(request.POST.get("rating", "")))
    except ValueError:
        allowed = ", ".join(f"{value} ({label})" for value, label in Rating.choices)
        return HttpResponseBadRequest(f"rating must be one of {allowed}.", content_type="text/plain")
    Review.record(request, card, rating)
    if request.htmx:
        response = render(request, "quiz/rating_ack.html", {"card": card, "rating": rating})
        patch_vary_headers(response, ["HX-Request"])
        return response
    messages.success(request, f"Saved: {rating.label}.")
    return redirect(f"{card.get_absolute_url()}?answer=shown#how-did-you-do")
