"""Group texts' vectors by cosine similarity (greedy centroid clustering), largest groups first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

Vectors = npt.NDArray[np.floating] | Sequence[Sequence[float]]


@dataclass(frozen=True)
class Group:
    """Indices into the input; `representative` is the member closest to the group's centroid."""

    members: tuple[int, ...]
    representative: int

    @property
    def size(self) -> int:
        return len(self.members)


def _unit_rows(vectors: Vectors) -> npt.NDArray[np.float64]:
    matrix = np.asarray(vectors, dtype=np.float64)
    if matrix.ndim != 2:
        raise ValueError(f"expected a 2-D array of vectors, got shape {matrix.shape}")
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector stays zero: its similarity to everything is 0, so it ends up alone.
    units: npt.NDArray[np.float64] = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
    return units


def group_by_similarity(vectors: Vectors, *, threshold: float) -> list[Group]:
    """Greedy centroid clustering: each vector, in input order, joins the most similar group if that
    group's centroid is at least `threshold` similar, else starts a new group.

    Input order decides ties and seeds (pass newest first to seed groups with recent questions).
    Groups come back largest first; equal sizes keep the order in which they were started.
    """
    if not -1.0 <= threshold <= 1.0:
        raise ValueError(f"threshold must be within [-1, 1], got {threshold}")
    rows = _unit_rows(vectors)
    if rows.shape[0] == 0:
        return []
    sums = np.zeros_like(rows)  # running sum of each group's members; row k is group k
    centroids = np.zeros_like(rows)
    joinable = np.zeros(rows.shape[0], dtype=bool)
    members: list[list[int]] = []
    for index, row in enumerate(rows):
        count = len(members)
        best = -1
        if count and np.any(row):
            similarities = centroids[:count] @ row
            similarities[~joinable[:count]] = -np.inf  # a group seeded by a zero vector has no direction
            candidate = int(np.argmax(similarities))
            if similarities[candidate] >= threshold:
                best = candidate
        if best < 0:
            best = count
            members.append([])
        members[best].append(index)
        sums[best] += row
        norm = np.linalg.norm(sums[best])
        if norm > 0:
            centroids[best] = sums[best] / norm
            joinable[best] = True
    groups = [_group(ids, rows, centroids[k]) for k, ids in enumerate(members)]
    return sorted(groups, key=lambda g: -g.size)  # sorted() is stable: equal sizes keep their start order


def _group(ids: list[int], rows: npt.NDArray[np.float64], centroid: npt.NDArray[np.float64]) -> Group:
    closeness = rows[ids] @ centroid
    return Group(members=tuple(ids), representative=ids[int(np.argmax(closeness))])
