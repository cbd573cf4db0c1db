"""Sign up, the email address reset links go to, and deleting an account; Django's own views
serve log in, log out and the password pages (urls.py)."""

from django.contrib import messages
from django.contrib.auth import login, logout
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme

from serving.ratelimit import rate_limited

from .forms import DeleteAccountForm, EmailForm, SignupForm
from .password_attempts import limit_password_attempts
from .signals import account_created


@rate_limited("login", methods=("POST",))  # creating accounts in bulk is the same abuse
def signup(request: HttpRequest) -> HttpResponse:
    next_url = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(next_url, {request.get_host()}, request.is_secure()):
        next_url = ""
    if request.user.is_authenticated:
        return redirect(next_url or "progress")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        user = form.save()
        account_created.send(sender=SignupForm, user=user, choices=form.cleaned_data)
        # Logging in joins what this visitor studied so far to the new account.
        login(request, user, backend="accounts.backends.InstructorFlagBackend")
        messages.success(
            request, f"Welcome, {user.get_username()}. Your progress is now kept in your account."
        )
        return redirect(next_url or reverse("progress"))
    return render(request, "accounts/signup.html", {"form": form, "next": next_url})


@limit_password_attempts  # the form checks a password
@login_required
def delete_account(request: HttpRequest) -> HttpResponse:
    """The account and everything that is its, once its password confirms it: what the other
    apps keep of it (showings, reviews, schedules, profile, the real runs it started) each
    cascades from the user."""
    form = DeleteAccountForm(request.user, request.POST or None)
    if request.method == "POST" and form.is_valid():
        username = request.user.get_username()
        request.user.delete()
        logout(request)
        messages.success(request, f"The account {username} and everything recorded about it are deleted.")
        return redirect("home")
    return render(request, "accounts/delete_account.html", {"form": form})


@limit_password_attempts  # the form checks a password
@login_required
def email(request: HttpRequest) -> HttpResponse:
    form = EmailForm(request.POST or None, instance=request.user)
    if request.method == "POST" and form.is_valid():
        form.save()
        address = form.cleaned_data["email"]
        messages.success(
            request, f"Saved: reset links go to {address}." if address else "Saved: no email address."
        )
        return redirect(f"{reverse('progress')}#your-account")
    return render(request, "accounts/email.html", {"form": form})
