"""GET /api/v1/health/: database, vector store and task broker, without authentication."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from kombu.exceptions import KombuError
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from backend.api.schema import errors
from backend.core.selectors import health_check, unreachable

BROKER_TIMEOUT = 2  # seconds; kombu documents an int


def broker_status() -> str:
    """"ok" when the Celery broker accepts a connection within a couple of seconds, else a short error."""
    from backend.config.celery_app import app as celery_app

    try:
        with celery_app.connection_for_write() as connection:
            # One quick retry at most: a health probe must answer before the prober's own timeout.
            connection.ensure_connection(
                max_retries=1, interval_start=0, timeout=BROKER_TIMEOUT,
                # kombu documents the intervals as float seconds; celery-types' stubs wrongly declare int.
                interval_step=0.2, interval_max=0.5)  # type: ignore[arg-type]
    except (KombuError, OSError) as exc:
        return unreachable("broker", exc)
    return "ok"


class HealthApi(APIView):
    """Whether the service and its dependencies answer; for load balancers and monitors."""

    authentication_classes: list[type] = []
    permission_classes: list[type] = []

    class OutputSerializer(serializers.Serializer):
        status = serializers.ChoiceField(choices=["ok", "degraded"])
        database = serializers.CharField(help_text='"ok" or a short error (the cause is logged).')
        vector_store = serializers.CharField(help_text='"ok" or a short error (the cause is logged).')
        broker = serializers.CharField(help_text='"ok" or a short error (the cause is logged).')

        class Meta:
            ref_name = "Health"

    @extend_schema(
        operation_id="health",
        summary="Service health",
        tags=["health"],
        auth=[],
        responses={200: OutputSerializer, 503: OpenApiResponse(OutputSerializer, description="A dependency is down."),
                   **errors(429)},
    )
    def get(self, request: Request) -> Response:
        health = health_check()
        broker = broker_status()
        ok = health.ok and broker == "ok"
        body = {"status": "ok" if ok else "degraded", "database": health.database,
                "vector_store": health.vector_store, "broker": broker}
        return Response(self.OutputSerializer(body).data, status=200 if ok else 503)
