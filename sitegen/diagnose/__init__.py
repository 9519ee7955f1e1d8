"""Explain a job: findings on why it was slow or failed, recurring-job trends, failure groups."""
