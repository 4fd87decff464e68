"""An import-linter contract type: a package imports only the standard library and a short allow-list."""

from __future__ import annotations

import sys
from typing import cast

from grimp import ImportGraph
from importlinter import Contract, ContractCheck, fields, output

# `__future__` is a compiler directive with a module of its own; grimp lists it like any other import.
STANDARD = frozenset(sys.stdlib_module_names) | {"__future__"}


class OnlyExternalsContract(Contract):
    """Every module under `source_modules` imports, outside the root packages, only `allowed_externals`.

    The built-in `forbidden` type needs the unwanted packages named; ARCHITECTURE.md names the wanted
    ones (a new dependency of the pipeline must be a decision, recorded there), so this inverts it.
    Needs `include_external_packages = True`, so that third-party imports are in the graph.
    """

    type_name = "only_externals"

    source_modules = fields.ListField(subfield=fields.StringField())
    allowed_externals = fields.ListField(subfield=fields.StringField())

    def check(self, graph: ImportGraph, verbose: bool) -> ContractCheck:
        # Fields are parsed onto the instance; their class attributes are the field descriptors.
        allowed = STANDARD | set(cast("list[str]", self.allowed_externals))
        roots = set(self.session_options["root_packages"])
        illegal: list[tuple[str, str, tuple[int, ...]]] = []
        for source in cast("list[str]", self.source_modules):
            for module in sorted({source} | graph.find_descendants(source)):
                for imported in sorted(graph.find_modules_directly_imported_by(module)):
                    top = imported.split(".")[0]
                    if top in roots or top in allowed:
                        continue
                    details = graph.get_import_details(importer=module, imported=imported)
                    lines = tuple(detail["line_number"] for detail in details)
                    illegal.append((module, imported, lines))
        return ContractCheck(kept=not illegal, warnings=[], metadata={"illegal": illegal})

    def render_broken_contract(self, check: ContractCheck) -> None:
        for module, imported, lines in check.metadata["illegal"]:
            output.print_error(f"- {module} -> {imported} (l.{', '.join(map(str, lines))}): not in allowed_externals",
                               bold=False)
            output.new_line()
