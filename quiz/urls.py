from django.urls import path

from lessons.urls import CARD_PATH, LESSON_PRACTICE_PATH

from . import practice_set_views, practice_views, views

urlpatterns = [
    path(f"{CARD_PATH}show/", views.show_answer, name="show_answer"),
    path(f"{CARD_PATH}rate/", views.rate_card, name="rate_card"),
    path(f"{CARD_PATH}opened/", views.open_layer, name="open_layer"),
    path("practice/", practice_views.practice_index, name="practice_index"),
    # Before the templates' addresses: "set" is not a template's slug (lessons.models.RESERVED_PRACTICE_SLUGS).
    path("practice/set/", practice_set_views.practice_set, name="practice_set"),
    path(
        "practice/set/<int:number>/", practice_set_views.practice_set_overview, name="practice_set_overview"
    ),
    path(
        "practice/set/<int:number>/<int:position>/",
        practice_set_views.practice_set_item,
        name="practice_set_item",
    ),
    path("practice/<slug:template_slug>/", practice_views.practice_problem, name="practice_problem"),
    path("practice/<slug:template_slug>/rate/", practice_views.rate_practice, name="rate_practice"),
    # The first cut's addresses, kept working for links already shared: practice_views.moved_practice.
    path(LESSON_PRACTICE_PATH, practice_views.moved_practice, {"to": "practice_problem"}),
    path(f"{LESSON_PRACTICE_PATH}rate/", practice_views.moved_practice, {"to": "rate_practice"}),
    path("progress/", views.progress, name="progress"),
    path("progress/export.json", views.export, name="progress_export"),
    path("progress/sharing/", views.sharing, name="sharing"),
    path("review/", views.review, name="review"),
    path("review/next/", views.review_next, name="review_next"),
    path("instructor/", views.instructor, name="instructor"),
]
