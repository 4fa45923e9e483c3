"""(filled in as this layer lands)"""
__all__ = []
