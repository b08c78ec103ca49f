"""A session's row in a database store, as the SQLite and the PostgreSQL stores both keep
it: the index's fields (`SessionInfo`) beside the header line, brought up to date from
the entry lines appended since it was written, and the schema version check both
stores make before they touch a database.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable, Mapping, Sequence

from skillkit.session.format import Entry, FormatError, SessionHeader, decode_entry, encode_line
from skillkit.session.index import SessionInfo, _fold

__all__ = [
    "INFO_FIELDS",
    "fold_lines",
    "info_from_row",
    "migration_statements",
    "new_info",
    "read_listing",
    "row_values",
    "session_row",
    "update_row",
]

INFO_FIELDS = (
    "id, cwd, created, modified, parent_session, size, entries, messages, title, name, "
    "first_message, leaf_id"
)
"""The columns `info_from_row` reads, in its order."""

_ROW_FIELDS = (
    "modified",
    "size",
    "entries",
    "messages",
    "title",
    "name",
    "first_message",
    "leaf_id",
)


def update_row(table: str, placeholder: str) -> str:
    """The statement that brings a session's row in ``table`` up to date, with
    `row_values`' parameters (``placeholder``: the driver's, ``?`` or ``%s``)."""
    fields = ", ".join(f"{field} = {placeholder}" for field in _ROW_FIELDS)
    return f"UPDATE {table} SET {fields} WHERE id = {placeholder}"


def info_from_row(row: Sequence[object], url: str) -> SessionInfo:
    """The `SessionInfo` of a row holding `INFO_FIELDS` in a store at ``url``."""
    (sid, cwd, created, modified, parent, size, entries, messages, title, name, first, leaf) = row
    assert isinstance(sid, str)
    return SessionInfo(
        id=sid,
        path=f"{url}#{sid}",
        cwd=str(cwd),
        created=float(created),  # type: ignore[arg-type]
        modified=float(modified),  # type: ignore[arg-type]
        size=int(size),  # type: ignore[call-overload]
        entries=int(entries),  # type: ignore[call-overload]
        messages=int(messages),  # type: ignore[call-overload]
        title=str(title),
        name=name if isinstance(name, str) else None,
        first_message=str(first),
        leaf_id=leaf if isinstance(leaf, str) else None,
        parent_session=parent if isinstance(parent, str) else None,
    )


def new_info(header: SessionHeader, entries: Sequence[Entry]) -> SessionInfo:
    """The row of a session holding ``header`` and ``entries`` (its size counts the
    lines the file store would write)."""
    info = SessionInfo(
        id=header.id,
        path="",
        cwd=header.cwd,
        created=header.created,
        modified=header.created,
        size=len(encode_line(header)),
        parent_session=header.parent_session,
    )
    for entry in entries:
        _fold(info, entry)
        info.size += len(encode_line(entry))
    return info


def session_row(header: SessionHeader, info: SessionInfo) -> tuple[object, ...]:
    """A whole session's row (an import or a fork) for the session ``header`` opens and
    ``info`` sums up: id, header line, cwd, created, modified, parent session, size,
    entries, messages, title, name, first message, leaf id."""
    row = row_values(info)
    head = (header.id, encode_line(header), header.cwd, header.created, info.modified)
    return (*head, header.parent_session, *row[1:-1])


def row_values(info: SessionInfo) -> tuple[object, ...]:
    """The parameters of `update_row`'s statement for ``info``."""
    return (
        info.modified,
        info.size,
        info.entries,
        info.messages,
        info.title,
        info.name,
        info.first_message,
        info.leaf_id,
        info.id,
    )


def fold_lines(info: SessionInfo, lines: Iterable[bytes]) -> None:
    """Fold entry lines appended after ``info`` was written into it. A damaged line is
    counted, so its row is not read again, and otherwise passed over."""
    for line in lines:
        try:
            entry = decode_entry(line)
        except FormatError:
            info.entries += 1
            continue
        _fold(info, entry)
        info.size += len(line)


def read_listing(
    rows: Iterable[Sequence[object]], url: str
) -> tuple[builtins.list[SessionInfo], builtins.list[tuple[SessionInfo, Sequence[object]]]]:
    """The sessions of a listing's rows (`INFO_FIELDS`, anything the store adds, and
    last the number of entries stored), and those whose row is behind its entries (an
    open writer appended since the row was written), each with its whole row."""
    infos = []
    stale = []
    for row in rows:
        info = info_from_row(row[:12], url)
        if int(row[-1]) > info.entries:  # type: ignore[call-overload]
            stale.append((info, row))
        infos.append(info)
    return infos, stale


def migration_statements(
    found: int | None, current: int, migrations: Mapping[int, Sequence[str]], where: str
) -> builtins.list[str]:
    """The statements that take a database of schema ``found`` (None: new) to
    ``current``, in order. A database of a newer schema is refused (`RuntimeError`)
    rather than misread."""
    version = current if found is None else found
    if version > current:
        raise RuntimeError(
            f"{where}: session database of schema {version}; this SkillKit reads up to {current}"
        )
    return [statement for step in range(version, current) for statement in migrations[step]]
