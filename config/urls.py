from django.contrib import admin
from django.urls import include, path

from accounts.password_attempts import limit_password_attempts
from serving.views import healthz, readyz

admin.site.site_header = "felab administration"
admin.site.site_title = "felab admin"

urlpatterns = [
    # The simulator first: its prefix turns every other address away at once, where Django
    # tries each pattern of the three includes below in turn (none of them begins with sim/).
    path("sim/", include("felab_sim.urls")),
    # Home, lesson and card pages: lessons/urls.py.
    path("", include("lessons.urls")),
    # Show answer, rate, progress, review, instructor: quiz/urls.py.
    path("", include("quiz.urls")),
    # Sign up, log in and out, password change and reset, email, delete: accounts/urls.py.
    path("", include("accounts.urls")),
    path("healthz", healthz, name="healthz"),
    path("readyz", readyz, name="readyz"),
    # The admin's own log-in form checks passwords too: the same limit as /accounts/login/.
    # Matched before admin.site.urls, whose "admin:login" resolves to this same address.
    path("admin/login/", limit_password_attempts(admin.site.login)),
    path("admin/", admin.site.urls),
]
