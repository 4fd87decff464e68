"""Re-encrypting every stored secret with the current encryption key (`manage.py rotate_keys`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from django.apps import apps
from django.core.exceptions import ImproperlyConfigured
from django.db import models, transaction
from django.db.models.functions import Cast

from backend.core.fields import PREFIX, EncryptedTextField, decrypt_text, is_current

BATCH_SIZE = 500


@dataclass
class FieldRotation:
    """What rotation found in one encrypted column."""

    label: str  # "integrations.Integration.access_token"
    rotated: int = 0  # re-encrypted from a fallback key
    current: int = 0  # already under the current key
    plain: int = 0  # stored unencrypted (written around the field), now encrypted
    failed: list[str] = field(default_factory=list)  # "Integration #3": no configured key decrypts it


def encrypted_fields() -> list[tuple[type[models.Model], str]]:
    """Every (model, field name) holding an EncryptedTextField, in app order."""
    return [(model, f.name) for model in apps.get_models() for f in model._meta.concrete_fields
            if isinstance(f, EncryptedTextField)]


def rotate_encrypted_values(*, dry_run: bool = False, batch_size: int = BATCH_SIZE) -> list[FieldRotation]:
    """Re-encrypt every secret not yet under the current key; report per column. Idempotent.

    Rows are read and written in batches under a row lock, so a token saved meanwhile is not overwritten
    with its older value. A value no configured key decrypts is left as it is and reported.
    """
    return [_rotate_field(model, name, dry_run=dry_run, batch_size=batch_size) for model, name in encrypted_fields()]


def _raw_values(model: type[models.Model], name: str) -> models.QuerySet[models.Model]:
    # Cast to a plain TextField skips the field's decryption, so the stored ciphertext is what we read.
    return model._default_manager.annotate(_raw=Cast(models.F(name), output_field=models.TextField())).exclude(
        _raw=""
    )


def _rotate_field(model: type[models.Model], name: str, *, dry_run: bool, batch_size: int) -> FieldRotation:
    report = FieldRotation(label=f"{model._meta.label}.{name}")
    last_pk = None
    while True:
        with transaction.atomic():
            rows = _raw_values(model, name).select_for_update().order_by("pk")
            if last_pk is not None:
                rows = rows.filter(pk__gt=last_pk)
            batch = list(rows.values_list("pk", "_raw")[:batch_size])
            for pk, raw in batch:
                _rotate_value(model, name, pk, raw, report, dry_run=dry_run)
        if len(batch) < batch_size:
            return report
        last_pk = batch[-1][0]


def _rotate_value(model: type[models.Model], name: str, pk: object, raw: str, report: FieldRotation,
                  *, dry_run: bool) -> None:
    if is_current(raw):
        report.current += 1
        return
    if not raw.startswith(PREFIX):
        report.plain += 1
        plain = raw
    else:
        try:
            plain = decrypt_text(raw)
        except ImproperlyConfigured:  # no configured key decrypts it
            report.failed.append(f"{model.__name__} #{pk}")
            return
        report.rotated += 1
    if not dry_run:
        # update() passes the value through the field, which encrypts it with the current key.
        model._default_manager.filter(pk=pk).update(**{name: plain})
