"""(placeholder: being written)"""
