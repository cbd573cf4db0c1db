"""Every account page, under accounts/: the project's urls.py includes these at the root."""

from django.contrib.auth import views as auth_views
from django.urls import path

from . import views
from .password_attempts import limit_password_attempts

# Guessing passwords costs time: at most settings.RATE_LIMITS["login"] attempts a minute per
# address and per account, shared by every form that checks a password, sends a reset email or
# spends a reset link.
login_view = limit_password_attempts(
    auth_views.LoginView.as_view(redirect_authenticated_user=True, template_name="accounts/login.html")
)
password_change_view = limit_password_attempts(
    auth_views.PasswordChangeView.as_view(template_name="accounts/password_change_form.html")
)
password_reset_view = limit_password_attempts(
    auth_views.PasswordResetView.as_view(
        template_name="accounts/password_reset_form.html",
        email_template_name="accounts/password_reset_email.html",
        subject_template_name="accounts/password_reset_subject.txt",
    )
)
password_reset_confirm_view = limit_password_attempts(
    auth_views.PasswordResetConfirmView.as_view(template_name="accounts/password_reset_confirm.html")
)

urlpatterns = [
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", login_view, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/change/", password_change_view, name="password_change"),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(template_name="accounts/password_change_done.html"),
        name="password_change_done",
    ),
    path("accounts/password/reset/", password_reset_view, name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(template_name="accounts/password_reset_done.html"),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        password_reset_confirm_view,
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(template_name="accounts/password_reset_complete.html"),
        name="password_reset_complete",
    ),
    path("accounts/email/", views.email, name="account_email"),
    path("accounts/delete/", views.delete_account, name="delete_account"),
]
