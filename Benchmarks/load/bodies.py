"""Writes the /diff bodies the load benchmark posts: 20 and 10,000 movies a side, where the
new side has 5% deleted, 5% inserted, 5% edited and its first tenth shuffled."""
import json
import random
import sys


def movies(count, first=0):
    return [{"id": i, "title": f"Movie number {i}", "year": 1950 + i % 70,
             "rating": (i % 100) / 10, "tags": ["comedy"] if i % 3 == 0 else ["drama", "new"]}
            for i in range(first, first + count)]


def body(count, rng):
    old = movies(count)
    new = [dict(item) for item in old]
    head = new[: count // 10]
    rng.shuffle(head)
    new[: count // 10] = head
    for index in rng.sample(range(count), max(1, count // 20)):
        new[index]["title"] += " (edited)"
    del new[count // 3: count // 3 + max(1, count // 20)]
    new[count // 2: count // 2] = movies(max(1, count // 20), first=10 * count)
    return {"old": old, "new": new}


if __name__ == "__main__":
    directory = sys.argv[1]
    rng = random.Random(7)
    for name, count in [("small", 20), ("large", 10_000)]:
        with open(f"{directory}/{name}.json", "w") as out:
            json.dump(body(count, rng), out, separators=(",", ":"))
