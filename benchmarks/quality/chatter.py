"""Filler chit-chat for the conversational-memory benchmark.

Everything here is small talk written for this benchmark: openers, closers, short
acknowledgements and themed exchanges. Themed lines deliberately share vocabulary with the
planted facts (gyms, flights, boilers, sisters, coffee, bikes...) so that neither keyword
search nor dense search finds the evidence trivially.

Placeholders: ``{u}`` the user's first name, ``{p}`` the first name of someone the user
knows (never together with how they are related), ``{rel}`` a relation word (never together
with a name), ``{day}``, ``{time}``, ``{food}``, ``{n}``.
"""

from __future__ import annotations

OPENERS_USER = [
    "hey",
    "hi again",
    "morning!",
    "Hello, quick one today.",
    "ok I'm back",
    "Evening. Long day.",
    "hi hi",
    "Are you there?",
    "good morning :)",
    "Hey, got a minute?",
    "yo",
    "Hello!",
    "back again, sorry",
    "Hi there",
    "afternoon!",
    "can I think out loud for a bit?",
]
OPENERS_ASSISTANT = [
    "Hi {u}! What's on your mind?",
    "Hello again, how's your day going?",
    "Hey {u}, good to hear from you.",
    "Morning! How can I help?",
    "I'm here. What's up?",
    "Hi! Always happy to chat.",
    "Hey! Go ahead, I'm listening.",
    "Welcome back, {u}. What are we working on today?",
]
CLOSERS_USER = [
    "ok thanks, talk later",
    "That's all for now.",
    "cheers!",
    "gotta run, bye",
    "thanks, that helps",
    "Night!",
    "ok I'll let you know how it goes",
    "brb, dinner",
    "thanks!!",
    "perfect, bye for now",
]
CLOSERS_ASSISTANT = [
    "Anytime, take care!",
    "Talk soon, {u}.",
    "Good luck with everything!",
    "Sleep well!",
    "Enjoy your evening.",
    "See you next time.",
    "Happy to help, bye for now!",
]
# Sentences people open a message with before getting to the point.
LEAD_INS = [
    "Long day.",
    "Okay, quick update.",
    "So much going on this week.",
    "Quick one before I forget.",
    "Right, news.",
    "Sorry, I've been meaning to tell you.",
    "Anyway.",
    "Ugh, what a week.",
    "Morning, still half asleep.",
    "Random, but.",
    "Okay so.",
    "Not much to report, except this.",
]
ACKS_USER = [
    "haha yes",
    "true",
    "ok",
    "fair enough",
    "hmm maybe",
    "lol",
    "yeah exactly",
    "I'll think about it",
    "right?",
    "not sure tbh",
    "good point",
    "ugh, yes",
    "makes sense",
    "ha, probably",
    "sure",
    "no idea honestly",
    "that's what I said!",
    "mm, could be",
]
FOLLOWUPS_ASSISTANT = [
    "Let me know if you want to talk it through.",
    "Fair enough! No rush.",
    "Ha, I get that.",
    "Do you want me to make a note of it?",
    "Totally understandable.",
    "That's a good instinct.",
    "Want some ideas, or just venting?",
    "Makes sense to me.",
]

DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
TIMES = ["7pm", "6:30", "half eight", "noon", "4pm", "9pm", "10am", "5:45"]
FOODS = [
    "risotto",
    "dal",
    "ramen",
    "shakshuka",
    "lasagna",
    "tacos",
    "a big salad",
    "pho",
    "curry",
    "pierogi",
    "paella",
    "falafel wraps",
    "mac and cheese",
    "stir fry",
]

# theme -> "user line | assistant reply" pairs (the reply answers that line).
_THEME_TEXT: dict[str, str] = {
    "work": """
Work was a lot today, back-to-back meetings until {time}. |
    Back-to-back meetings are exhausting. Did you get any time to eat?
My manager wants the quarterly report by {day}, no pressure. |
    Want me to draft an outline so you have a head start?
I spent the whole morning fixing a spreadsheet someone else broke. |
    The invisible work nobody thanks you for. Did you find the culprit formula?
We had a team lunch at the new place near the office, the {food} was decent. |
    Team lunches are nice when the food is decent. Would you go back?
The office coffee machine is broken again, so everyone is grumpy. |
    A broken coffee machine can sink a whole team's morale.
I think I'll work from home on {day}, I can't face the office. |
    Sounds sensible. Should I remind you to block your calendar?
Presentation went okay, I talked way too fast though. |
    Everyone talks fast when they're nervous. Okay is a win.
Someone booked the big meeting room for the whole week, classic. |
    Classic. Maybe the small room and a walk instead?
I need to write a status update but I have nothing to say. |
    Status updates with nothing to say are the hardest. Want a template?
There's a reorganisation rumour going around, everyone's nervous. |
    Rumours are the worst part. Try not to read too much into it until there's news.
Got a nice message from a client today, that made my week. |
    Nice! Feedback like that is worth saving for your review.
My laptop decided to install updates right before a call. |
    Laptops have impeccable timing. Did you make the call in the end?
New intern started today, very keen, asks great questions. | Keen interns are great, enjoy the energy.
I have {n} unread emails and I refuse to look at them. |
    Maybe just the flagged ones today and the rest tomorrow?
""",
    "food": """
Made {food} tonight and honestly it was the best one yet. |
    That sounds delicious! What did you do differently?
I keep buying fresh herbs and letting them die in the fridge. |
    Freezing herbs in olive oil in an ice cube tray might save them.
What should I cook on {day}? I'm out of ideas. | How about a one-pan {food}? Minimal washing up.
Tried a new bakery on the corner, their croissants are dangerous. | Dangerous in the best way, I assume.
I ate cereal for dinner again, don't judge me. | No judgement at all, cereal is a valid dinner.
Meal prep Sunday went well, five lunches sorted. | Meal prep wins are the best wins.
The recipe said 20 minutes, it took me an hour and a half. |
    Recipe timings are pure fiction, everyone knows that.
Ordered takeaway {food} even though I said I wouldn't this week. | One takeaway isn't the end of the world.
The recipe wanted a whole bunch of parsley for one spoonful, what do I do with the rest? |
    Parsley pesto or a tabbouleh would use it up.
Bought way too many lemons, any ideas? | Lemon curd, lemonade, or a lemon drizzle cake?
There's a food market on {day}, might go hungry and buy everything. |
    Going hungry to a food market is a bold strategy.
""",
    "weekend": """
Any plans for the weekend? I have none and I love it. | A plan-free weekend sounds perfect honestly.
Saturday was lazy, I didn't leave the sofa until 3pm. | Sounds like you needed it.
We went to a flea market and came back with a lamp nobody needed. |
    A lamp nobody needed is the true flea market experience.
Thinking of a day trip somewhere on {day}, any ideas? |
    A day trip could be nice. By train, or somewhere to walk?
Had people over on Saturday, the flat is still a mess. | The mess means it was a good evening.
I slept in until eleven, felt amazing. | Sleeping in is underrated.
Long walk on Sunday morning, the park was empty. | An empty park on a Sunday morning is a small luxury.
Spent the weekend sorting out the wardrobe, found clothes I forgot I owned. | Free new clothes, basically!
We did a board game night and it got way too competitive. | Which game caused the most arguments?
""",
    "health": """
I really need to book a check-up at the clinic, it's been ages. | Want me to remind you to call them tomorrow?
Got a cold, my head feels like it's full of cotton wool. | Feel better soon! Rest, fluids and maybe some soup.
Trying to drink more water, I set reminders on my phone. | Reminders are a good trick. How's it going so far?
My back is stiff from sitting at the desk all day. | Stretch breaks every hour can help a stiff back.
The pharmacy was out of the allergy tablets I usually get. |
    Maybe ask them to order some in, or try another branch?
Headache all afternoon, probably too much screen time. | Screen breaks and water might help.
Had a flu jab today, arm's a bit sore. | A sore arm is normal, it should ease in a day or two.
Waiting room at the doctor's was packed, took two hours. | Two hours is a long wait, I'm sorry.
Trying to cut down on sugar, day three and I'm grumpy. | Day three is the hardest, it gets easier.
""",
    "fitness": """
The climbing gym was packed tonight, I waited ages for the bouldering wall. |
    Busy evenings are tough. Maybe try going earlier?
Forgot my padlock so my stuff sat in an open locker, living dangerously. |
    Living dangerously indeed! Did everything survive?
Went for a run before work, it was freezing. | Cold runs feel great afterwards, at least.
Tried a spin class, my legs have filed a complaint. | Spin classes are brutal. Stretch tonight!
I keep paying for the gym and not going. | Maybe set a small goal, like twice a week?
Yoga class was full of people who can touch their toes, not me. | Everyone starts somewhere, toes included.
Did a few laps at the pool, the water was freezing. | Brave! Did it warm up once you got going?
Cycled to the lake and back, about {n} kilometres. | That's a great ride!
My fitness watch says I walked 19,000 steps, mostly looking for my keys. |
    19,000 steps is impressive, whatever the reason.
Thinking of joining a five-a-side team. | A team could be a fun way to stay motivated.
""",
    "travel": """
Airports at 6am are a special kind of misery. | Early flights are rough. Coffee helps.
I always forget which terminal my flight leaves from. | Worth checking the booking email the night before.
Looking at train tickets for the summer, prices are wild. | Booking early usually helps with train prices.
Hotel room had a view of a car park, very romantic. | Nothing says romance like a car park.
I packed three books and read none of them on the trip. | Optimistic packing is a classic.
Is it weird that I like long train journeys? | Not weird at all, long train journeys are lovely.
Passport expires next year, need to sort that out. | Renewing early is wise, the queues get long in spring.
The flight was delayed two hours, we sat on the tarmac. | Delays on the tarmac are the worst kind.
Booked a cheap hostel for the weekend, wish me luck. | Good luck! Bring earplugs.
Jet lag is wrecking me, I was awake at 4am. | Jet lag usually takes a day per time zone, hang in there.
""",
    "home": """
The boiler is making that clicking noise again. | A clicking boiler is worth getting checked before winter.
Still no sofa. Still sitting on cushions on the floor. |
    Cushions on the floor can be cosy, in a student-flat way.
Looking at flats online again, just for fun. | Flat browsing is a hobby in itself.
The neighbour's dog barked for two hours straight. | Two hours is a lot. Maybe mention it to them kindly?
I finally hung the pictures I bought a year ago. | Pictures on the wall make such a difference.
Hoovered the whole flat and it still looks messy. | Sometimes it's the clutter, not the dust.
The washing machine flooded the bathroom floor a bit. | Oh no. Check the hose connection, that's often it.
Bought a plant, already worried I'll kill it. | Plants are more forgiving than people think. Water it weekly.
The front door key sticks, I nearly got stuck outside. | A bit of graphite in the lock often helps.
Someone keeps stealing the parcels from our hallway. | Maybe ask for parcels to be left at a pickup point?
Our internet went down for the whole evening. | Frustrating! Did it come back on its own?
Rearranged the living room, it feels like a new flat. | Rearranging is the cheapest redecorating.
""",
    "pets": """
Saw the cutest dog at the park, a tiny sausage dog in a raincoat. |
    A dog in a raincoat is the best thing to see on a grey day.
My friend's cat sat on my laptop during a call. | Cats love a warm keyboard. Did anyone notice?
Thinking about fostering animals, but the flat is small. | Fostering is lovely if you have the space and time.
The vet's waiting room is basically a zoo. | I can imagine the chaos.
There's a cat in our street that everyone feeds, it's huge now. | The street cat sounds very well loved.
Pet insurance is so expensive, is it worth it? | It really depends on the animal and its age.
A parrot at the cafe kept shouting hello at everyone. | A very friendly greeter!
""",
    "money": """
Rent and bills all went out on the same day, my account is crying. |
    Splitting payments across the month can help with that.
Trying to stick to a budget this month. | Small budget wins add up!
The bank's website logged me out three times today. | Annoying. Maybe clear the cookies and try again?
I cancelled two streaming subscriptions I forgot I had. |
    Cancelling forgotten subscriptions is an instant win.
Should I start putting money in a savings account? | An emergency fund is usually a good first step.
Tax return is due and I'm avoiding it. | Want to go through it together step by step?
Spent {n} euros on coffee this month, apparently. | That's a lot of coffee! Worth it though?
Sold some old clothes online, made enough for a pizza. | Decluttering that pays for pizza is ideal.
""",
    "tech": """
My phone battery dies by lunch now. | A new battery is often the cheaper fix.
Forgot my password again and had to reset it. | A password manager would save you the resets.
The wifi in the flat drops every evening around nine. | Router restarts sometimes help with evening dropouts.
Is it worth upgrading my laptop or just getting a new battery? |
    If it's only the battery, replacing it is much cheaper.
I spent an hour trying to connect the printer. | Printers are the final boss of home tech.
Cracked my phone screen, just a small crack for now. | Maybe a screen protector before the crack spreads?
Set up a password manager finally, feel very grown up. | A password manager is a great move.
""",
    "media": """
Started a new series last night, watched five episodes, oops. | Five episodes is a respectable binge.
Any book recommendations? I finished mine on the train. |
    What did you like about the last one? I can suggest a few.
There's a music festival in town this weekend, tickets are pricey. | Maybe just go for one day?
Went to the cinema, the film was long but good. | Long but good is a fine review.
I keep starting podcasts and never finishing them. | Podcasts are easy to drop, no guilt needed.
The concert was loud, my ears are still ringing. | Ringing ears means it was a good concert, right?
Rewatching an old comedy I loved as a teenager. | Rewatching old favourites is so comforting.
My playlist has been the same twenty songs for a month. | Maybe try a new playlist this week?
""",
    "weather": """
It's pouring down again, my umbrella gave up. | Umbrellas never survive proper wind.
Finally some sunshine, I ate lunch outside. | Lunch in the sun is the best lunch.
So windy today, I almost got blown off my bike. | Stay safe out there!
It snowed a little and the whole city panicked. | A little snow always causes chaos.
Weather app said sunny, it was not sunny. | Weather apps are optimists.
The forecast says rain all week, classic. | Good week for indoor plans then.
""",
    "family": """
My {rel} is being weird about the holiday plans again. | Family plans always get complicated.
I should call my {rel} this weekend, it's been a while. | A call could be really nice.
{p} sent me a photo of their lunch, which was mostly cheese. | Sounds like a great lunch to me.
Bumped into {p} at the market this morning. | Nice surprise! Did you have time to chat?
{p} says hi, by the way. | Hi back!
My {rel} wants to organise a big family dinner, everyone is dreading it. |
    Big family dinners are a lot. Maybe offer to bring dessert and leave early?
Family group chat is chaos today, someone posted forty photos. | Forty photos is a commitment.
{p} keeps asking when I'm visiting next. | That's sweet of them to ask.
Helped {p} carry some boxes, my arms are dead. | Good deed done. Rest those arms!
My {rel} gave me the worst advice today, but with love. | Advice with love still counts, sort of.
""",
}


def _pairs(text: str) -> list[tuple[str, str]]:
    """Parse "user line | reply" rows; an indented row continues the one above."""
    rows: list[str] = []
    for line in text.strip().splitlines():
        if line.startswith(" ") and rows:
            rows[-1] += " " + line.strip()
        else:
            rows.append(line.strip())
    out = []
    for row in rows:
        user, reply = row.split(" | ")
        out.append((user.strip(), reply.strip()))
    return out


THEMES: dict[str, list[tuple[str, str]]] = {k: _pairs(v) for k, v in _THEME_TEXT.items()}

# Lines a second person says in a shared session (placeholders: {u}, {c}).
COMPANION_OPENERS = [
    "Hi! {c} here too, we're sharing the laptop.",
    "{u} is making me do this. Hello, assistant.",
    "Hey, it's {c}, I'm on the sofa next to {u}.",
    "Hello! {c} joining, don't mind me.",
]
COMPANION_CHATTER = [
    "Ha, don't listen to {u}.",
    "Can you settle an argument for us?",
    "I agree with {u} for once.",
    "That's not how I remember it.",
    "Wait, I want to add something.",
    "Can we order food first?",
    "{u} always says that.",
    "ok ok, go on",
    "This is true, sadly.",
    "lol",
]
ASSISTANT_TO_PAIR = [
    "Hi both! Happy to help.",
    "Good to have you both here.",
    "I'll stay neutral on that one.",
    "Ha, you two sound like a team.",
    "Go ahead, I'm listening to you both.",
]
