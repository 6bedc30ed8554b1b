"""Chat platforms: each turns its events into IncomingMessage and sends replies back."""
