"""The conversation core: addressing, commands, prompts, replies, jobs, CLI and config."""
