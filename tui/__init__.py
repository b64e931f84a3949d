"""textquarry's Textual dashboard over the engine's store and events."""
