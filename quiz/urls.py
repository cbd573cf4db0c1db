from django.urls import path

from lessons.urls import CARD_PATH, PRACTICE_PATH

from . import practice_views, views

urlpatterns = [
    path(f"{CARD_PATH}show/", views.show_answer, name="show_answer"),
    path(f"{CARD_PATH}rate/", views.rate_card, name="rate_card"),
    path(f"{CARD_PATH}opened/", views.open_layer, name="open_layer"),
    path(PRACTICE_PATH, practice_views.practice_problem, name="practice_problem"),
    path(f"{PRACTICE_PATH}rate/", practice_views.rate_practice, name="rate_practice"),
    path("progress/", views.progress, name="progress"),
    path("progress/export.json", views.export, name="progress_export"),
    path("progress/sharing/", views.sharing, name="sharing"),
    path("review/", views.review, name="review"),
    path("review/next/", views.review_next, name="review_next"),
    path("instructor/", views.instructor, name="instructor"),
]
