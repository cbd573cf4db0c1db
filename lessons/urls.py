from django.urls import path

from . import views

# quiz/urls.py adds the card's Show answer, rate and opened endpoints under the same path.
CARD_PATH = "learn/<slug:course_slug>/<slug:lesson_slug>/step-<int:step>/"
# Where the first cut served a lesson's practice problems; quiz/urls.py redirects it to /practice/SLUG/.
LESSON_PRACTICE_PATH = "learn/<slug:course_slug>/<slug:lesson_slug>/practice/<slug:template_slug>/"

urlpatterns = [
    path("", views.home, name="home"),
    path("learn/<slug:course_slug>/<slug:lesson_slug>/", views.lesson_detail, name="lesson"),
    path(CARD_PATH, views.card_detail, name="card"),
    path("glossary/", views.glossary, name="glossary"),
]
