from django.contrib import admin
from django.urls import include, path

from config.views import healthz

admin.site.site_header = "felab administration"
admin.site.site_title = "felab admin"

urlpatterns = [
    # Home, lesson and card pages: lessons/urls.py.
    path("", include("lessons.urls")),
    # Show answer, rate, progress, review, instructor, sign up / log in: quiz/urls.py.
    path("", include("quiz.urls")),
    path("sim/", include("felab_sim.urls")),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
]
