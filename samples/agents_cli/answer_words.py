"""`answer_words`: how many words the agent's final answer has."""


def evaluate(instance):
    text = "".join(part.get("text", "") for part in instance["response"]["parts"])
    words = len(text.split())
    return {"score": words, "explanation": f"{words} words"}
