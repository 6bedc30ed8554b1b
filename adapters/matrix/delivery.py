"""Sending the core's answers into a room: split, formatted, as replies, files uploaded; and
the parts of a streamed answer, sent and replaced (``m.replace``) as it grows."""

from __future__ import annotations

import io
import logging
from collections import OrderedDict

from nio import AsyncClient, RoomSendResponse, UploadResponse

from adapters.matrix.formatting import MarkdownRenderer, split_message
from adapters.matrix.outgoing import edit_content, file_content, text_content
from bot.messages import Attachment, OutgoingMessage

logger = logging.getLogger(__name__)

# How many of its own event ids the bot remembers to recognise replies to itself without
# asking the server; older ones are looked up.
REMEMBERED_EVENTS = 2048


class SentEvents:
    """A bounded record of the event ids the bot sent."""

    def __init__(self, capacity: int = REMEMBERED_EVENTS) -> None:
        self._capacity = capacity
        self._event_ids: OrderedDict[str, None] = OrderedDict()

    def add(self, event_id: str) -> None:
        self._event_ids[event_id] = None
        while len(self._event_ids) > self._capacity:
            self._event_ids.popitem(last=False)

    def __contains__(self, event_id: object) -> bool:
        return event_id in self._event_ids


class DeliveryFailed(Exception):
    """The homeserver refused a message (the log says why)."""


class Deliverer:
    def __init__(self, client: AsyncClient, max_message_chars: int) -> None:
        self._client = client
        self._renderer = MarkdownRenderer()
        self.max_message_chars = max_message_chars
        self.sent = SentEvents()

    async def send_text(
        self,
        room_id: str,
        text: str,
        *,
        reply_to_event_id: str | None,
        thread_root_id: str | None,
        notice: bool = False,
    ) -> list[str]:
        """Send ``text`` in as many parts as needed; only the first part is the reply."""
        event_ids = []
        for number, part in enumerate(split_message(text, self.max_message_chars)):
            content = text_content(
                part,
                self._renderer,
                reply_to_event_id=reply_to_event_id if number == 0 else None,
                thread_root_id=thread_root_id,
                notice=notice,
            )
            event_id = await self._send(room_id, content)
            if event_id is not None:
                event_ids.append(event_id)
        return event_ids

    async def send_part(
        self, room_id: str, text: str, *, reply_to_event_id: str | None, thread_root_id: str | None
    ) -> str:
        """One message of ``text`` (already cut to size); its event id."""
        content = text_content(
            text, self._renderer, reply_to_event_id=reply_to_event_id, thread_root_id=thread_root_id
        )
        return await self._sent_or_raise(room_id, content)

    async def replace(self, room_id: str, event_id: str, text: str) -> None:
        """Edit the bot's message ``event_id`` to say ``text``."""
        await self._sent_or_raise(room_id, edit_content(event_id, text, self._renderer))

    async def redact(self, room_id: str, event_id: str) -> None:
        await self._client.room_redact(room_id, event_id)

    async def _sent_or_raise(self, room_id: str, content: dict[str, object]) -> str:
        event_id = await self._send(room_id, content)
        if event_id is None:
            raise DeliveryFailed(f"the homeserver refused a message in {room_id}")
        return event_id

    async def deliver(
        self, room_id: str, message: OutgoingMessage, *, default_reply_to: str | None
    ) -> None:
        reply_to = message.reply_to_id or default_reply_to
        if message.text.strip():
            await self.send_text(
                room_id, message.text, reply_to_event_id=reply_to, thread_root_id=message.thread_id
            )
        for attachment in message.attachments:
            await self._send_file(room_id, attachment, message.thread_id)

    async def react(self, room_id: str, event_id: str, key: str) -> None:
        """An ``m.annotation`` reaction to ``event_id``: an acknowledgement without a message."""
        relation = {"rel_type": "m.annotation", "event_id": event_id, "key": key}
        content: dict[str, object] = {"m.relates_to": relation}
        await self._send(room_id, content, "m.reaction")

    async def _send_file(
        self, room_id: str, attachment: Attachment, thread_root_id: str | None
    ) -> None:
        room = self._client.rooms.get(room_id)
        encrypt = bool(room is not None and room.encrypted)
        upload, encryption = await self._client.upload(
            io.BytesIO(attachment.content),
            content_type=attachment.media_type,
            filename=attachment.filename,
            encrypt=encrypt,
            filesize=len(attachment.content),
        )
        if not isinstance(upload, UploadResponse):
            logger.error("upload of %s to %s failed: %s", attachment.filename, room_id, upload)
            await self.send_text(
                room_id,
                f"I could not upload {attachment.filename}; please try again later.",
                reply_to_event_id=None,
                thread_root_id=thread_root_id,
                notice=True,
            )
            return
        content = file_content(
            attachment.filename,
            attachment.media_type,
            len(attachment.content),
            url=upload.content_uri,
            encryption=encryption,
            thread_root_id=thread_root_id,
        )
        await self._send(room_id, content)

    async def _send(
        self, room_id: str, content: dict[str, object], event_type: str = "m.room.message"
    ) -> str | None:
        response = await self._client.room_send(
            room_id,
            event_type,
            content,
            # Nobody verifies a bot's peers interactively; keys still go to every device.
            ignore_unverified_devices=True,
        )
        if not isinstance(response, RoomSendResponse):
            logger.error("sending to %s failed: %s", room_id, response)
            return None
        event_id: str = response.event_id
        self.sent.add(event_id)
        return event_id
