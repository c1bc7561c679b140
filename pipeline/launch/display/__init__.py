"""What a person sees: log set-up, the closing summary and exit status, live progress."""
