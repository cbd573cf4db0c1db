from django.urls import path

from . import views

urlpatterns = [
    path("", views.sim_page, name="sim"),
    path("sweep.json", views.sweep_json, name="sweep_json"),
]
