from django import forms

from .models import LearnerProfile


class SharingForm(forms.ModelForm):
    class Meta:
        model = LearnerProfile
        fields = ("share_name",)
        labels = {"share_name": "Show my name to instructors next to my typed answers"}
