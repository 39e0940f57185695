"""dynamics"""
