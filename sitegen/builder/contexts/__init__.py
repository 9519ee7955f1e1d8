"""Run contexts: each page's runs of its name, foreseen from peeks before the map."""
