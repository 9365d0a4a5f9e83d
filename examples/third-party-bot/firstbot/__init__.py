"""loveletter-firstbot: an example of a bot package installed beside the arena."""
