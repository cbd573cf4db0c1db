from django.contrib.auth import views as auth_views
from django.urls import path

from lessons.urls import CARD_PATH
from serving.ratelimit import limit_password_attempts

from . import views

# Guessing passwords costs time: at most settings.RATE_LIMITS["login"] attempts a minute per
# address and per account, shared by every form that checks a password, sends a reset email or
# spends a reset link.
login_view = limit_password_attempts(auth_views.LoginView.as_view(redirect_authenticated_user=True))
password_change_view = limit_password_attempts(auth_views.PasswordChangeView.as_view())
password_reset_view = limit_password_attempts(auth_views.PasswordResetView.as_view())
password_reset_confirm_view = limit_password_attempts(auth_views.PasswordResetConfirmView.as_view())

urlpatterns = [
    path(f"{CARD_PATH}show/", views.show_answer, name="show_answer"),
    path(f"{CARD_PATH}rate/", views.rate_card, name="rate_card"),
    path(f"{CARD_PATH}opened/", views.open_layer, name="open_layer"),
    path("progress/", views.progress, name="progress"),
    path("progress/export.json", views.export, name="progress_export"),
    path("progress/sharing/", views.sharing, name="sharing"),
    path("review/", views.review, name="review"),
    path("review/next/", views.review_next, name="review_next"),
    path("instructor/", views.instructor, name="instructor"),
    path("accounts/signup/", views.signup, name="signup"),
    path("accounts/login/", login_view, name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("accounts/password/change/", password_change_view, name="password_change"),
    path(
        "accounts/password/change/done/",
        auth_views.PasswordChangeDoneView.as_view(),
        name="password_change_done",
    ),
    path("accounts/password/reset/", password_reset_view, name="password_reset"),
    path(
        "accounts/password/reset/sent/",
        auth_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/password/reset/<uidb64>/<token>/",
        password_reset_confirm_view,
        name="password_reset_confirm",
    ),
    path(
        "accounts/password/reset/done/",
        auth_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    path("accounts/email/", views.email, name="account_email"),
    path("accounts/delete/", views.delete_account, name="delete_account"),
]
