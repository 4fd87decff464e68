"""Dashboard URLs: the gurus list, a guru's create/edit/delete pages and its example questions."""

from django.urls import path

from backend.dashboard.gurus import views

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/gurus/new/", views.guru_new, name="guru-create"),
    path("dashboard/g/<slug:slug>/", views.guru_edit, name="guru-edit"),
    path("dashboard/g/<slug:slug>/delete/", views.guru_remove, name="guru-delete"),
    path("dashboard/g/<slug:slug>/examples/", views.example_add, name="example-add"),
    path("dashboard/g/<slug:slug>/examples/<int:example_id>/", views.example_change, name="example-change"),
    path("dashboard/g/<slug:slug>/maintainers/", views.maintainer_add, name="maintainer-add"),
    path("dashboard/g/<slug:slug>/maintainers/<int:user_id>/remove/", views.maintainer_remove,
         name="maintainer-remove"),
]
