"""Real HTTP servers on 127.0.0.1 that speak the APIs our backends call, for tests."""
