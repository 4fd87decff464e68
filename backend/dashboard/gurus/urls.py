"""Dashboard URLs: the gurus list, a guru's create/edit/delete pages, its summary card and example questions."""

from django.urls import path

from backend.dashboard.gurus import summary_views, views

urlpatterns = [
    path("", views.home, name="home"),
    path("dashboard/gurus/new/", views.guru_new, name="guru-create"),
    path("dashboard/g/<slug:slug>/", views.guru_edit, name="guru-edit"),
    path("dashboard/g/<slug:slug>/delete/", views.guru_remove, name="guru-delete"),
    path("dashboard/g/<slug:slug>/examples/", views.example_add, name="example-add"),
    path("dashboard/g/<slug:slug>/examples/<int:example_id>/", views.example_change, name="example-change"),
    path("dashboard/g/<slug:slug>/summary/budget/", summary_views.summary_budget, name="guru-summary-budget"),
    path("dashboard/g/<slug:slug>/summary/suggest/", summary_views.summary_suggest, name="guru-summary-suggest"),
    path("dashboard/g/<slug:slug>/summary/approve/", summary_views.summary_approve, name="guru-summary-approve"),
    path("dashboard/g/<slug:slug>/maintainers/", views.maintainer_add, name="maintainer-add"),
    path("dashboard/g/<slug:slug>/maintainers/<int:user_id>/remove/", views.maintainer_remove,
         name="maintainer-remove"),
]
