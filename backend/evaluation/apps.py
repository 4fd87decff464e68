"""App configuration for evaluation; registers its task."""

from django.apps import AppConfig


class EvaluationConfig(AppConfig):
    name = "backend.evaluation"
    label = "evaluation"
    verbose_name = "Evaluation"

    def ready(self) -> None:
        # Runs are queued by name (core.tasks.enqueue_on_commit): every process must know the task.
        from backend.evaluation import tasks  # noqa: F401
