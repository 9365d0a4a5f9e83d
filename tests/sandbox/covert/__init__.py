"""Covert-channel pairs: a sender bot that encodes its hand through something two sandboxes might share, a receiver
bot that decodes it, and the driver that plays them turn by turn as the arena does (issue 34, part 2)."""
