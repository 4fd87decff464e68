"""factory_boy factories for the domain models."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from backend.gurus.models import Guru
from backend.sources.models import DataSource, SourceKind


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.django.Password("correct horse battery staple")


class GuruFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Guru

    slug = factory.Sequence(lambda n: f"guru-{n}")
    name = factory.Sequence(lambda n: f"Guru {n}")
    domain_knowledge = "Task queues for Python"


class DataSourceFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = DataSource

    guru = factory.SubFactory(GuruFactory)
    kind = SourceKind.WEBSITE
    url = factory.Sequence(lambda n: f"https://docs.example.com/page-{n}")
