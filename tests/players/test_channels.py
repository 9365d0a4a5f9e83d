"""The ZeroMQ channel on real sockets: what it reads, in which order."""

from __future__ import annotations

import time
from pathlib import Path

import zmq

from arena.players.channels import Dropped, ZmqChannel


def readable(channel: ZmqChannel, wanted: list[zmq.Socket], seconds: float = 5.0) -> list[zmq.Socket]:
    """Poll until every socket in `wanted` is readable at once."""
    poller = zmq.Poller()
    for socket, events in channel.poll_items():
        poller.register(socket, events)
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready = [socket for socket, _ in poller.poll(50)]
        if all(socket in ready for socket in wanted):
            return ready
    raise AssertionError("the sockets never became readable together")


def test_a_reply_sent_just_before_the_bot_hangs_up_is_read_before_the_drop(tmp_path: Path) -> None:
    """A bot that answers shutdown and exits sends its "ok", then hangs up: when both are there at once, the
    reply is read first, so a clean exit is not taken for a dropped connection."""
    context = zmq.Context()
    channel = ZmqChannel(context, tmp_path)
    bot = context.socket(zmq.DEALER)
    bot.linger = 0
    try:
        bot.connect(channel.endpoint)
        bot.send_multipart([b"", b'{"type": "hello"}'])
        [(identity, hello)] = channel.arrivals(readable(channel, [channel.socket]))
        assert hello == b'{"type": "hello"}'
        channel.accept(identity)

        bot.send_multipart([b"", b'{"type": "ok"}'])
        bot.close()
        arrivals = channel.arrivals(readable(channel, [channel.socket, channel.monitor]))
        [(_, reply), (_, drop)] = arrivals
        assert reply == b'{"type": "ok"}'
        assert isinstance(drop, Dropped)
    finally:
        bot.close()
        channel.close()
        context.term()
