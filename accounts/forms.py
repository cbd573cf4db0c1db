"""The account pages' own forms; Django's log-in, password change and reset forms serve the rest."""

from typing import Any

from django import forms
from django.contrib.auth.forms import UserCreationForm
from django.contrib.auth.models import User


class SignupForm(UserCreationForm):
    share_name = forms.BooleanField(
        required=False,
        label="Show my name to instructors next to my typed answers",
        help_text="Leave it off and instructors see your answers without your name.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username", "email")
        help_texts = {"email": "Optional. Used only to send you a link if you forget your password."}


class DeleteAccountForm(forms.Form):
    """Deleting an account cannot be undone: its password confirms it is the owner asking."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    def __init__(self, user: Any, *args: Any, **kwargs: Any) -> None:
        self.user = user
        super().__init__(*args, **kwargs)

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.user.check_password(password):
            raise forms.ValidationError(
                "That is not your password; nothing was deleted.", code="wrong_password"
            )
        return password


class EmailForm(forms.ModelForm):
    """The address a password reset link goes to. Its password confirms the change: whoever
    sets the address can reset the password, so a borrowed session must not be enough."""

    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )

    class Meta:
        model = User
        fields = ("email",)
        labels = {"email": "Email address"}
        help_texts = {
            "email": "Where a link to reset a forgotten password is sent. Leave it empty to have none."
        }

    def clean_password(self) -> str:
        password = self.cleaned_data["password"]
        if not self.instance.check_password(password):
            raise forms.ValidationError(
                "That is not your password; the address was not changed.", code="wrong_password"
            )
        return password
