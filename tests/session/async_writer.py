"""A process appending to a session of the async PostgreSQL store until it is killed:
``python -m tests.session.async_writer URL FOLDER`` prints the session id, then the id
of each entry once it is stored (for the kill -9 test)."""

from __future__ import annotations

import asyncio
import sys

from skillkit.models import UserMessage
from skillkit.session import AsyncPostgresSessionStore


async def main(url: str, folder: str) -> None:
    async with AsyncPostgresSessionStore(url, home=folder) as store:
        session = await store.create(folder)
        print(session.id, flush=True)
        number = 0
        while True:
            entry = session.append_message(UserMessage(content=f"message {number}"))
            await session.written()
            print(entry.id, flush=True)
            number += 1


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
