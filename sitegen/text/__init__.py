"""Plain text helpers every layer may use: formatting figures and times, escaping HTML."""
