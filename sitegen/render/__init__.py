"""Render what a site holds: the ``/api`` mirror, the HTML pages and their pieces."""
