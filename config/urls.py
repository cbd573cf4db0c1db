from django.contrib import admin
from django.urls import include, path

from config.views import healthz
from lessons import views as lesson_views

admin.site.site_header = "felab administration"
admin.site.site_title = "felab admin"

card_path = "learn/<slug:course_slug>/<slug:lesson_slug>/step-<int:step>/"

urlpatterns = [
    path("", lesson_views.home, name="home"),
    path("learn/<slug:course_slug>/<slug:lesson_slug>/", lesson_views.lesson_detail, name="lesson"),
    path(card_path, lesson_views.card_detail, name="card"),
    path("glossary/", lesson_views.glossary, name="glossary"),
    # Show answer, rate, progress, review, instructor, sign up / log in: quiz/urls.py.
    path("", include("quiz.urls")),
    path("sim/", include("felab_sim.urls")),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
]
