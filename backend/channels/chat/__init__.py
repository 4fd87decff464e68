"""Chat text shared by the chat bots: message splitting and markdown conversion, standard library only."""
