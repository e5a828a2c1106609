def total(lines):
    return sum(line["amount"] for line in lines)
