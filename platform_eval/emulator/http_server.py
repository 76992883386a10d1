"""uvicorn's server, made to stop as soon as it is told.

uvicorn notices a stop at its next tick (it sleeps a tenth of a second between ticks), then
gives open connections a tenth of a second to finish before it waits for them: ~0.17 s for
every stop. The embedded emulator stops once per command (and the tests stop it hundreds of
times), with no connection open by then: here a stop wakes the tick at once, and the grace
period is kept only for connections still open.
"""

from __future__ import annotations

import asyncio
import socket
from contextlib import suppress

import uvicorn

#: uvicorn's tick: how often the server looks at what it was told, besides being woken.
_TICK = 0.1


class PromptServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._told: asyncio.Event | None = None

    def tell_to_stop(self) -> None:
        """Stops serving (from any thread): the server's thread then ends within moments."""
        self.should_exit = True
        loop, told = self._loop, self._told
        if loop is not None and told is not None:
            with suppress(RuntimeError):  # its loop has closed already: nothing to wake
                loop.call_soon_threadsafe(told.set)

    async def main_loop(self) -> None:
        # uvicorn's main loop, woken by tell_to_stop rather than waiting out its sleep.
        self._told = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        counter = 0
        should_exit = await self.on_tick(counter)
        while not should_exit:
            counter = (counter + 1) % 864000
            with suppress(TimeoutError):
                await asyncio.wait_for(self._told.wait(), _TICK)
            should_exit = await self.on_tick(counter)

    async def shutdown(self, sockets: list[socket.socket] | None = None) -> None:
        if self.server_state.connections or self.server_state.tasks:
            await super().shutdown(sockets)  # its grace period, for what is still open
            return
        for server in self.servers:
            server.close()
        for sock in sockets or []:
            sock.close()
        for server in self.servers:
            await server.wait_closed()
        if not self.force_exit:
            await self.lifespan.shutdown()
