"""Doctor check of the Discord bot token and the Message Content intent, over the REST API.

Only called when a token is configured. The API base URL is injected so that tests can point
the check at a server on 127.0.0.1.
"""

from __future__ import annotations

from bot.config import Config
from bot.doctor.base import CheckResult
from bot.doctor.http import DEFAULT_TIMEOUT_SECONDS, Answer, Unreachable, get, join

NAME = "discord"
DISCORD_API = "https://discord.com/api/v10"

# Application flags: the Message Content intent, for bots in 100+ servers and in fewer.
GATEWAY_MESSAGE_CONTENT = 1 << 18
GATEWAY_MESSAGE_CONTENT_LIMITED = 1 << 19

# View Channels, Send Messages, Embed Links, Attach Files, Read Message History, Add
# Reactions, Send Messages in Threads: what replies, exports, threads, catch-up and the
# reaction to an edit need, nothing more.
INVITE_PERMISSIONS = (
    (1 << 6) | (1 << 10) | (1 << 11) | (1 << 14) | (1 << 15) | (1 << 16) | (1 << 38)
)


def invite_url(application_id: str) -> str:
    return (
        f"https://discord.com/oauth2/authorize?client_id={application_id}"
        f"&scope=bot+applications.commands&permissions={INVITE_PERMISSIONS}"
    )


class DiscordCheck:
    name = NAME

    def __init__(
        self, *, api_base_url: str = DISCORD_API, timeout: float = DEFAULT_TIMEOUT_SECONDS
    ) -> None:
        self._api_base_url = api_base_url
        self._timeout = timeout

    async def __call__(self, config: Config) -> CheckResult:
        token = config.discord.token
        if not token:
            return CheckResult.skipped(NAME, "discord.token is not set: Discord is off")
        headers = {"Authorization": f"Bot {token}"}
        try:
            user = await get(
                self._url("/users/@me"), headers=headers, timeout_seconds=self._timeout
            )
            if user.status_code != 200:
                return judge_user(user)
            application = await get(
                self._url("/applications/@me"), headers=headers, timeout_seconds=self._timeout
            )
        except Unreachable as error:
            return CheckResult.failed(
                NAME,
                f"cannot reach the Discord API at {self._api_base_url} ({error}): the bot "
                "needs outgoing HTTPS to discord.com; check this machine's DNS and firewall",
            )
        return judge_application(user, application)

    def _url(self, path: str) -> str:
        return join(self._api_base_url, path)


def judge_user(answer: Answer) -> CheckResult:
    if answer.status_code == 401:
        return CheckResult.failed(
            NAME,
            "Discord rejected discord.token (HTTP 401): in the Developer Portal, Bot -> Reset "
            "Token, and put the new token in MNEMO_DISCORD__TOKEN",
        )
    return CheckResult.failed(
        NAME, f"Discord answered HTTP {answer.status_code} to /users/@me: try again later"
    )


def judge_application(user: Answer, application: Answer) -> CheckResult:
    name = f"{user.field('username')} ({user.field('id')})"
    flags = application.field("flags")
    if application.status_code != 200 or not isinstance(flags, int):
        return CheckResult.failed(
            NAME,
            f"token works for {name}, but /applications/@me answered HTTP "
            f"{application.status_code}: the intents could not be checked",
        )
    if not flags & (GATEWAY_MESSAGE_CONTENT | GATEWAY_MESSAGE_CONTENT_LIMITED):
        return CheckResult.failed(
            NAME,
            f"token works for {name}, but the Message Content intent is off: Developer "
            "Portal -> Bot -> Privileged Gateway Intents -> Message Content Intent",
        )
    return CheckResult.passed(
        NAME,
        f"token works for {name}, Message Content intent on; invite: "
        f"{invite_url(str(application.field('id')))}",
    )
