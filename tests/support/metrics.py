"""Read a /metrics exposition with prometheus_client's own parser, as a Prometheus server would."""

from __future__ import annotations

from dataclasses import dataclass

from prometheus_client.parser import text_string_to_metric_families


@dataclass(frozen=True)
class Samples:
    """Every sample of one scrape: (sample name, sorted labels) → value."""

    values: dict[tuple[str, tuple[tuple[str, str], ...]], float]

    def get(self, name: str, **labels: str) -> float:
        """One sample's value; 0 when the series is absent (a counter that never moved)."""
        return self.values.get((name, tuple(sorted(labels.items()))), 0.0)

    def total(self, name: str, **labels: str) -> float:
        """The sum over every series of `name` whose labels include `labels`."""
        wanted = set(labels.items())
        return sum(value for (sample, have), value in self.values.items() if sample == name and wanted <= set(have))

    def label_values(self) -> set[str]:
        return {value for (_, labels) in self.values for _, value in labels}


def parse(text: str) -> Samples:
    values = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return Samples(values)
