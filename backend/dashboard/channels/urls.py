"""Dashboard URLs: channels (API keys, widget ids) and integrations."""

from django.urls import path

from backend.dashboard.channels import views

_G = "dashboard/g/<slug:slug>"
urlpatterns = [
    path(f"{_G}/channels/", views.channels, name="channels"),
    path(f"{_G}/channels/keys/new/", views.apikey_create, name="apikey-create"),
    path(f"{_G}/channels/keys/<int:pk>/revoke/", views.apikey_revoke, name="apikey-revoke"),
    path(f"{_G}/channels/widgets/new/", views.widget_create, name="widget-create"),
    path(f"{_G}/channels/widgets/<int:pk>/", views.widget_edit, name="widget-edit"),
    path(f"{_G}/channels/widgets/<int:pk>/delete/", views.widget_delete, name="widget-delete"),
    path(f"{_G}/integrations/", views.integrations, name="integrations"),
]
