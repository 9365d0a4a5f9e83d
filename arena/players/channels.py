"""How bytes reach a bot process and come back: a ZeroMQ ROUTER socket or the bot's standard streams.

A channel moves whole messages only. Waiting, deadlines and faults are the host's job; a channel
says what happened: a message (its bytes), something garbled, a peer that went away, or nothing yet.
`start(transport, ...)` launches a bot's process with what its transport needs and gives its channel:
a new transport is a class with the Channel methods and an entry in CHANNELS.
"""

from __future__ import annotations

import errno
import os
import struct
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, ClassVar, Protocol, cast

import zmq
from zmq.backend import Socket as _RawSocket

from arena.players.values import Transport
from arena.sandbox import BotProcess, LaunchSpec, launch

MAX_MESSAGE = 64 * 1024
"""Largest message (ZeroMQ) or line (stdio) a bot may send, in bytes."""
STALE_MOST = 16
"""Messages (or 64 KiB chunks over stdio) dropped at most before one message is sent: a bot that keeps
writing cannot hold the arena there; what is left is read as its reply, and judged."""
BLANK = b" \t\r"
"""A stdio line of nothing but JSON's blanks is no message (an empty print), and is skipped."""


@dataclass(frozen=True, slots=True)
class Garbled:
    """Something arrived that is not a message of the protocol's framing."""

    detail: str


@dataclass(frozen=True, slots=True)
class Dropped:
    """The bot's connection went away while its process lives (e.g. a message over the size cap)."""

    detail: str


Arrival = bytes | Garbled | Dropped
"""A message arrives as its payload, bare: it is what nearly every arrival is."""

POLLIN, POLLOUT = int(zmq.POLLIN), int(zmq.POLLOUT)


class Channel(Protocol):
    peer: bytes | None
    """The routing id of the connection that said a valid hello, where a channel tells connections apart."""
    token_required: ClassVar[bool]
    """A hello must carry the process's token (a stdio bot, on pipes only its process holds, may leave it out)."""
    stdout_logged: ClassVar[bool]
    """The bot's standard output goes to its log: a hello found there was sent on the wrong transport."""

    def poll_items(self) -> list[tuple[Any, int]]:
        """What to poll for now, and for what (zmq.POLLIN, POLLOUT): sockets and file descriptors."""
        ...

    def pump(self, ready: Sequence[object]) -> bool:
        """Move what waits to be written, where the poll found room; False once the bot cannot be written to."""
        ...

    def send(self, payload: bytes) -> bool:
        """False when the bot's connection is gone."""
        ...

    def arrivals(self, ready: Sequence[object]) -> list[tuple[bytes, Arrival]]:
        """Everything readable now, as (routing id, arrival)."""
        ...

    def accept(self, identity: bytes) -> None:
        """The last message read, a valid hello, came from the bot: from now on only its connection counts."""
        ...

    def discard_stale(self) -> int:
        """Drop what arrived while no message awaited a reply; how much was dropped."""
        ...

    def close(self) -> None: ...


def start(
    transport: Transport, spec: LaunchSpec, directory: Path, context: zmq.Context | None = None
) -> tuple[Channel, BotProcess]:
    """The bot's process, launched with what its transport needs (`directory`: a private one for a socket), and
    its channel. SandboxError or OSError when it cannot start, leaving nothing open."""
    return CHANNELS[transport].start(spec, directory, context)


class ZmqChannel:
    """The arena's ROUTER socket for one bot process, in that bot's private directory."""

    token_required: ClassVar[bool] = True
    stdout_logged: ClassVar[bool] = True

    @classmethod
    def start(cls, spec: LaunchSpec, directory: Path, context: zmq.Context | None) -> tuple[ZmqChannel, BotProcess]:
        channel = cls(context if context is not None else zmq.Context.instance(), directory)
        try:
            process = launch(replace(spec, env={**spec.env, "ARENA_ENDPOINT": channel.endpoint}, socket_dir=directory))
        except BaseException:
            channel.close()
            raise
        return channel, process

    def __init__(self, context: zmq.Context, directory: Path) -> None:
        self.path = directory / "arena.sock"
        self.endpoint = f"ipc://{self.path}"
        self.socket = context.socket(zmq.ROUTER)
        self.socket.linger = 0
        self.socket.setsockopt(zmq.MAXMSGSIZE, MAX_MESSAGE)
        self.socket.setsockopt(zmq.ROUTER_MANDATORY, 1)
        self.socket.bind(self.endpoint)
        self.monitor = self.socket.get_monitor_socket(zmq.EVENT_DISCONNECTED)
        self._poll_items: list[tuple[Any, int]] = [(self.socket, POLLIN), (self.monitor, POLLIN)]
        self.peer: bytes | None = None
        """The routing id of the connection that said a valid hello: the bot."""
        self._peer_fd: int | None = None
        self._last_fd: int | None = None  # the connection the last message before the hello came on

    def accept(self, identity: bytes) -> None:
        """The last message read, a valid hello, came from the bot: from now on only its connection counts."""
        self.peer, self._peer_fd = identity, self._last_fd

    def poll_items(self) -> list[tuple[Any, int]]:
        return self._poll_items

    def pump(self, ready: Sequence[object]) -> bool:
        return True  # libzmq writes for us

    def send(self, payload: bytes) -> bool:
        """False when the bot's connection is gone."""
        assert self.peer is not None
        socket = self.socket
        try:
            _send(socket, self.peer, _MORE)
            _send(socket, b"", _MORE)
            _send(socket, payload, _LAST)
        except zmq.ZMQError as error:
            if error.errno in (zmq.EHOSTUNREACH, zmq.EAGAIN, errno.EHOSTUNREACH):
                return False
            raise
        return True

    def arrivals(self, ready: Sequence[object]) -> list[tuple[bytes, Arrival]]:
        """Everything readable now, as (routing id, arrival); a drop has an empty routing id."""
        found = self._message() if self.socket in ready else []  # one; the next poll tells of more
        if self.monitor in ready and (event := _receive(self.monitor)) is not None and self._is_the_bots(event):
            # After the message: a bot that replies and exits (its shutdown "ok") sent it before it hung up.
            found.append((b"", Dropped("the connection was dropped: a message over 64 KiB, or the socket closed")))
        return found

    def _is_the_bots(self, event: list[bytes]) -> bool:
        """Whether a disconnection is the bot's connection: another process that reaches the endpoint (where
        the sandbox lets it) and hangs up must not cost the bot its match. Before the hello, any is."""
        if self._peer_fd is None:
            return True
        return _event_value(event) == self._peer_fd

    def discard_stale(self) -> int:
        """Drop what arrived while no message awaited a reply (a second reply to one message): it must not
        be taken as the answer to the next. How many messages were dropped."""
        dropped = 0
        while dropped < STALE_MOST and cast(int, _get(self.socket, _EVENTS)) & _POLLIN:
            dropped += len(self._message())
        return dropped

    def _message(self) -> list[tuple[bytes, Arrival]]:
        """The next message on the socket, read frame by frame: a message from a bot is three frames
        (routing id, empty delimiter, payload), so a well-formed one costs two looks at RCVMORE."""
        socket = self.socket
        try:
            if self.peer is None:  # before the hello: note each message's connection (its descriptor)
                frame = socket.recv(_LAST, copy=False)
                identity, self._last_fd = frame.bytes, _source_fd(frame)
            else:
                identity = _recv(socket, _LAST)  # a ROUTER's routing id frame always has more after it
        except zmq.Again:
            return []
        frames = [_recv(socket, _LAST)]
        while _get(socket, _RCVMORE):
            frames.append(_recv(socket, _LAST))
        if len(frames) == 2 and frames[0] == b"":
            return [(identity, frames[1])]
        shape = " + ".join(f"{len(f)} bytes" for f in frames)
        return [(identity, Garbled(f"expected an empty delimiter frame and one message frame, got {shape}"))]

    def close(self) -> None:
        # Stop the monitor before closing its socket: libzmq's last event would go to a closed peer.
        self.socket.disable_monitor()
        self.monitor.close(linger=0)
        self.socket.close(linger=0)
        self.path.unlink(missing_ok=True)


_MORE = int(zmq.SNDMORE) | int(zmq.NOBLOCK)  # plain ints: pyzmq's flag enums are slow to combine
_LAST = int(zmq.NOBLOCK)
_RCVMORE = int(zmq.RCVMORE)
_EVENTS, _POLLIN = int(zmq.EVENTS), int(zmq.POLLIN)
# The Cython methods underneath pyzmq's Python wrappers: one message costs a few of these calls, and
# the wrappers' argument handling, needed by none of them, was a measurable share of each move.
_send, _recv, _get = _RawSocket.send, _RawSocket.recv, _RawSocket.get


def _source_fd(frame: zmq.Frame) -> int | None:
    try:
        return int(frame.get(zmq.SRCFD))
    except (zmq.ZMQError, AttributeError):  # a libzmq without it: every disconnection is the bot's, as before
        return None


def _event_value(event: list[bytes]) -> int:
    """The value of a socket monitor's event: its first frame is a 16-bit event id, then a 32-bit value (for a
    disconnection, the connection's descriptor). Read here, as zmq.utils.monitor would, without the asyncio that
    module imports for its other helpers."""
    _, value = struct.unpack("=hi", event[0][:6])
    return int(value)


def _receive(socket: zmq.Socket) -> list[bytes] | None:
    try:
        return socket.recv_multipart(_LAST)
    except zmq.Again:
        return None


class StdioChannel:
    """JSON lines over the bot's stdin and stdout pipes."""

    token_required: ClassVar[bool] = False
    stdout_logged: ClassVar[bool] = False

    @classmethod
    def start(cls, spec: LaunchSpec, directory: Path, context: zmq.Context | None) -> tuple[StdioChannel, BotProcess]:
        process = launch(replace(spec, stdio=True))
        assert process.stdin_fd is not None and process.stdout_fd is not None
        return cls(process.stdin_fd, process.stdout_fd), process

    def __init__(self, stdin_fd: int, stdout_fd: int) -> None:
        os.set_blocking(stdin_fd, False)
        os.set_blocking(stdout_fd, False)
        self.stdin_fd = stdin_fd
        self.stdout_fd = stdout_fd
        self._buffer = bytearray()
        self._skipping = False
        """Inside a line found over the cap: the rest of it, up to its newline, is dropped."""
        self._pending = b""
        self._closed = False
        self.peer: bytes | None = None
        """Always None: a pipe has one peer, the process."""
        self._reading_items: list[tuple[Any, int]] = [(stdout_fd, POLLIN)]
        self._writing_items: list[tuple[Any, int]] = [(stdout_fd, POLLIN), (stdin_fd, POLLOUT)]

    def poll_items(self) -> list[tuple[Any, int]]:
        return self._writing_items if self._pending else self._reading_items

    def pump(self, ready: Sequence[object]) -> bool:
        return self.stdin_fd not in ready or self.flush()

    def accept(self, identity: bytes) -> None:
        pass  # a pipe has one peer, the process

    def send(self, payload: bytes) -> bool:
        self._pending += payload + b"\n"
        return self.flush()

    def flush(self) -> bool:
        """Write what the pipe takes now; False when the bot closed its stdin."""
        try:
            while self._pending:
                written = os.write(self.stdin_fd, self._pending)
                self._pending = self._pending[written:]
        except BlockingIOError:
            pass
        except (BrokenPipeError, OSError):
            self._pending = b""
            return False
        return True

    def arrivals(self, ready: Sequence[object]) -> list[tuple[bytes, Arrival]]:
        if self.stdout_fd not in ready or self._closed:
            return []
        try:
            chunk = os.read(self.stdout_fd, MAX_MESSAGE + 1)
        except BlockingIOError:
            chunk = None
        except OSError:
            chunk = b""
        if chunk == b"":
            self._closed = True
        elif chunk:
            self._buffer += chunk
        found: list[tuple[bytes, Arrival]] = []
        buffer = self._buffer
        while (end := buffer.find(b"\n")) >= 0:
            line = bytes(buffer[:end])
            del buffer[: end + 1]
            if self._skipping:
                self._skipping = False  # the end of a line already found over the cap
            elif len(line) > MAX_MESSAGE:
                found.append((b"", Garbled("a line over 64 KiB")))
            elif line.strip(BLANK):
                found.append((b"", line))
        if len(buffer) > MAX_MESSAGE:
            buffer.clear()
            if not self._skipping:
                self._skipping = True
                found.append((b"", Garbled("a line over 64 KiB")))
        if self._closed and not found:
            found.append((b"", Dropped("the bot closed its standard output")))
        return found

    def discard_stale(self) -> int:
        """Drop what the bot wrote while no message awaited a reply, so that it is not taken as the answer to
        the next; how many bytes were dropped."""
        dropped = len(self._buffer)
        self._buffer.clear()
        self._skipping = False
        while not self._closed and dropped < STALE_MOST * MAX_MESSAGE:
            try:
                chunk = os.read(self.stdout_fd, MAX_MESSAGE + 1)
            except OSError:  # BlockingIOError: nothing more
                break
            if not chunk:
                break  # the end of the stream: the next wait reads it again, and reports it
            dropped += len(chunk)
        return dropped

    def close(self) -> None:
        """The pipes belong to the bot process, which closes them when it is killed."""
        self._buffer.clear()
        self._pending = b""


CHANNELS: dict[Transport, type[ZmqChannel] | type[StdioChannel]] = {
    Transport.ZMQ: ZmqChannel,
    Transport.STDIO: StdioChannel,
}
