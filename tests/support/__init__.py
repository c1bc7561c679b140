"""Test helpers that run real components (GCS emulator, fault-injecting proxy)."""
