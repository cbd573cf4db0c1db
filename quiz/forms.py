from django import forms
from django.contrib.auth.forms import UserCreationForm

from .models import LearnerProfile


class SignupForm(UserCreationForm):
    share_name = forms.BooleanField(
        required=False,
        label="Show my name to instructors next to my typed answers",
        help_text="Leave it off and instructors see your answers without your name.",
    )

    class Meta(UserCreationForm.Meta):
        fields = ("username",)


class SharingForm(forms.ModelForm):
    class Meta:
        model = LearnerProfile
        fields = ("share_name",)
        labels = {"share_name": "Show my name to instructors next to my typed answers"}
